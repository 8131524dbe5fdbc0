// Italian elides the article before a word said with a vowel, numbers included: "l'8 nov",
// "all'11 dic", "dall'1 dic", "l'80%", against "il 18", "al 2 nov". The messages write the
// article before a placeholder ("intorno al {date}", "Scattata il {time}"); the value decides.
//
// The 1st takes the elided form too: the pages write the day as the numeral 1 ("1 dic 2029", as
// Intl writes it), read "uno", so "l'1 dicembre" (the Accademia della Crusca gives "l'1" and
// "il 1°", "il primo", as both correct; "il 1" is the one mixing the two readings).

const elided: Record<string, string> = { il: "l'", al: "all'", dal: "dall'", del: "dell'", nel: "nell'", sul: "sull'" };

// An article (or a preposition joined to one) as a word of its own, then a placeholder.
const articleBefore = /(?<![\p{L}'’])(il|al|dal|del|nel|sul|Il|Al|Dal|Del|Nel|Sul) \{(\w+)\}/gu;

/**
 * Whether `value` starts with a number said with a vowel: uno, otto, undici, ottanta…,
 * ottocento…. Only numbers under a thousand, written without a grouping dot (a day, a
 * percentage): larger ones are left with the full article.
 */
export function saidWithVowel(value: string): boolean {
  const leading = /^(\d{1,3})(?!\d|\.\d)/.exec(value);
  if (!leading) return false;
  const n = Number(leading[1]);
  return n === 1 || n === 8 || n === 11 || (n >= 80 && n <= 89) || (n >= 800 && n <= 899);
}

/** `message` with each article before a placeholder elided where that placeholder's value asks for it. */
export function elideArticles(message: string, params: Record<string, string | number>): string {
  return message.replace(articleBefore, (whole, article: string, name: string) => {
    if (!(name in params) || !saidWithVowel(String(params[name]))) return whole;
    const short = elided[article.toLowerCase()]!;
    return `${article[0] === article[0]!.toUpperCase() ? short[0]!.toUpperCase() + short.slice(1) : short}{${name}}`;
  });
}
