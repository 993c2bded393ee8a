// A packed CMap imported as a Data module (wrangler.toml's rule for *.bcmap; esbuild's binary loader
// in the corpus bench gives a Uint8Array instead).
declare module "*.bcmap" {
  const value: ArrayBuffer | Uint8Array;
  export default value;
}
