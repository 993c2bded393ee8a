// Vite's `?inline` imports: a file's bytes as a base64 data URL (the PDF fixtures).
declare module "*.pdf?inline" {
  const dataUrl: string;
  export default dataUrl;
}
