/** What a thrown value says, for a log line or a person: an Error's message, anything else as text. */
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
