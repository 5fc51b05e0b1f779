import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// The published tool definitions live in ../examples/tools (no node_modules of
// their own): `dedupe` resolves their `zod` and `@tanstack/ai` from here, so the
// app and the definitions share one copy (TanStack hashes the zod schemas).
export default defineConfig({
  plugins: [react()],
  resolve: { dedupe: ['zod', '@tanstack/ai', 'react', 'react-dom'] },
  server: {
    fs: { allow: ['..'] },
    // `npm run dev`: the gateway from `make run` behind Vite's dev server.
    proxy: Object.fromEntries(
      ['/agents', '/approvals', '/me', '/inbox', '/interrupts', '/decisions'].map((path) => [path, 'http://127.0.0.1:8000']),
    ),
  },
  // Into the Python package: a wheel built after `make web` carries the UI (pyproject.toml's
  // package-data), so the gateway of a plain `pip install` serves it.
  build: { outDir: '../ag_ui_temporal/web', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  logLevel: 'warn',
})
