// Build the browser page (page/) with esbuild into a folder: index.html, page.js, page.css.
//
//   node build.mjs <out dir>
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { build } from 'esbuild'

const [out] = process.argv.slice(2)
await mkdir(out, { recursive: true })
await build({
  entryPoints: { page: 'page/page.jsx' },
  outdir: out,
  bundle: true,
  format: 'esm',
  jsx: 'automatic',
  minify: true,
  define: { 'process.env.NODE_ENV': '"production"' },
  loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file' },
  logLevel: 'error',
})
await copyFile('page/index.html', join(out, 'index.html'))
