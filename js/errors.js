// The one constructor of the module's errors: every error it throws is an
// Error, TypeError or RangeError with a `code` (ERR_...) a caller can test,
// and with the `cause` when one error led to another.

/** An error of class Kind with code and message, and cause when given. */
export function codedError(Kind, code, message, cause) {
  const err = cause === undefined ? new Kind(message) : new Kind(message, { cause });
  err.code = code;
  return err;
}
