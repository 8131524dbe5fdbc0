// A seeded generator (sfc32, seeded through a murmur3-style mixer). Math.random is neither
// seedable nor reproducible; sample data must be byte-identical for the same seed on any
// machine, so every random choice of the generator goes through one of these.
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Gaussian by Box-Muller. */
  normal(mean: number, sd: number): number;
}

function mix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Mixes any number of integer seed parts (e.g. seed, company index, stream) into one generator. */
export function createRng(...parts: number[]): Rng {
  let h = 0x811c9dc5;
  for (const part of parts) {
    // Seeds may exceed 32 bits: fold the high word in too.
    h = mix32(h ^ mix32(part >>> 0) ^ mix32(Math.floor(part / 4294967296) + 0x9e3779b9));
  }
  let a = mix32(h + 0x1b873593);
  let b = mix32(h + 0x27d4eb2f);
  let c = mix32(h + 0x165667b1);
  let d = mix32(h + 0x61c88647);

  const next = (): number => {
    const t0 = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const t = (t0 + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();

  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)] as T;
    },
    normal: (mean, sd) => {
      const u = 1 - next();
      const v = next();
      return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
  };
}

export interface WeightedPicker<T> {
  pick(rng: Rng): T;
}

/** O(log n) weighted choice over a fixed list (cumulative weights + binary search). */
export function createWeightedPicker<T>(items: readonly T[], weightOf: (item: T) => number): WeightedPicker<T> {
  if (items.length === 0) throw new Error('weighted picker over an empty list');
  const cumulative = new Float64Array(items.length);
  let total = 0;
  items.forEach((item, i) => {
    total += Math.max(0, weightOf(item));
    cumulative[i] = total;
  });
  return {
    pick(rng) {
      const target = rng.next() * total;
      let lo = 0;
      let hi = items.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((cumulative[mid] as number) > target) hi = mid;
        else lo = mid + 1;
      }
      return items[lo] as T;
    },
  };
}
