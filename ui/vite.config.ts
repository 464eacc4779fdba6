import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The Tauri window loads `dist/` in builds and this dev server (port 5173) in development.
export default defineConfig({
  plugins: [svelte()],
  // Component tests mount Svelte's browser build (happy-dom), not its server one.
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { target: 'es2022', outDir: 'dist', emptyOutDir: true, sourcemap: false },
  test: { environment: 'happy-dom', include: ['src/**/*.test.ts'] },
});
