import { defineConfig } from "vite";

// The inspector is served by `ctxhost serve` under /ui/ from the files
// embedded in the binary (server/inspector/dist, committed).
export default defineConfig({
  base: "/ui/",
  build: {
    outDir: "../server/inspector/dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
  },
});
