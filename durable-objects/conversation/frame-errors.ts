// The errors a conversation's socket tells a refused frame, beside the HTTP status the same request
// would have answered (docs/api-notes.md: every refusal of a frame carries its HTTP `status`).

/** The key that opened the socket is revoked or expired (HTTP: 401). */
export const KEY_GONE = {
  type: "authentication_error",
  status: 401,
  message: "the API key that opened this socket is revoked or expired",
};
/** A frame whose admission threw (the rate limiter, D1 or storage failed): nothing ran, a key it carried is free again. */
export const ADMISSION_FAILED = {
  type: "api_error",
  status: 503,
  message: "the frame could not be admitted (a service it needs failed); nothing ran; retry",
};
