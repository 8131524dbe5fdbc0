import type { CompanyStore } from '../../core/companies/index.js';

/** `store` with every lookup (or only those of `methods`) answering `delayMs` later than it
 * would: a call still running when its caller hangs up, cancels it or runs out of time. */
export function slowed(store: CompanyStore, delayMs: number, methods?: readonly (keyof CompanyStore)[]): CompanyStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (methods && !methods.includes(property as keyof CompanyStore)) return value.bind(target) as unknown;
      return async (...args: unknown[]) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
