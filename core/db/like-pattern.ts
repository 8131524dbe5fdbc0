/** Text for a LIKE / ILIKE pattern, matched as typed: its own `%`, `_` and `\` escaped. */
export const likeEscape = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);
