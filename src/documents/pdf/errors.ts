// The two ways an upload can fail to be a usable PDF. Apart from the reader, so the web service can tell
// them apart without loading pdf.js at start (it loads on the first upload).

/** The upload is not a PDF at all (HTTP 415). */
export class NotAPdfError extends Error {
  override name = 'NotAPdfError';
}

/** The upload starts like a PDF but pdf.js cannot open it: damaged, or locked by a password (HTTP 422). */
export class UnreadablePdfError extends Error {
  override name = 'UnreadablePdfError';
}

/** One page of an open PDF is damaged (pdf.js threw on it); the other pages can still be read. */
export class PageUnreadableError extends UnreadablePdfError {
  override name = 'PageUnreadableError';
  readonly reason: string;
  constructor(message: string, reason: string) {
    super(message);
    this.reason = reason;
  }
}
