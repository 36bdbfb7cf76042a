/** How long a command's exit waits for queued notifications. */
export const notifyGraceMs = 5_000;
