/** An error an operation handler answers, in the vendor's error shape (the sidecar's error body). */
export class SimulatorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The path parameter a 404 is about: the sidecar's not_found names its code and message. */
    readonly field?: string,
  ) {
    super(message);
  }
}
