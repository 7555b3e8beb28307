import { defineConfig } from "vite";
import preact from "@preact/preset-vite";

// Everything is bundled (no CDN); hashed file names under assets/ let the daemon cache them for a
// year. No inline script or module-preload polyfill: the daemon's Content-Security-Policy forbids
// inline code.
export default defineConfig({
  plugins: [preact()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  test: {
    include: ["src/**/*.test.ts", "scripts/**/*.test.mjs"],
    environment: "node",
  },
} as never);
