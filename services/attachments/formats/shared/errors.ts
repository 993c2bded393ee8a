// One error type for "this file is not what it claims to be": the tools turn it into a message the
// model can read (and the upload note into a stated problem) instead of a 500.

export type AttachmentFormatErrorCode =
  | "not_zip"
  | "corrupt_zip"
  | "truncated"
  | "unsupported"
  | "too_large"
  | "missing_entry"
  | "sheet_not_found"
  | "bad_xml";

export class AttachmentFormatError extends Error {
  override readonly name = "AttachmentFormatError";
  readonly code: AttachmentFormatErrorCode;

  constructor(code: AttachmentFormatErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
