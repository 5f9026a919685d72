/*
 * emitter.ts: the typed event emitter every object of the package uses.
 * A listener that throws never breaks the package's own state: the error
 * is handed to the platform's reportError (or a rethrow on a fresh task),
 * the way a DOM EventTarget treats a throwing listener, and the remaining
 * listeners still run.
 */

export type Listener<T> = (value: T) => void;

function report(err: unknown): void {
  const g = globalThis as { reportError?: (e: unknown) => void };
  if (typeof g.reportError === "function") g.reportError(err);
  else setTimeout(() => { throw err; }, 0);
}

export class Emitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  /** Calls fn for every `name` event; returns the function that stops it. */
  on<K extends keyof Events>(name: K, fn: Listener<Events[K]>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(fn as Listener<never>);
    return () => this.off(name, fn);
  }

  off<K extends keyof Events>(name: K, fn: Listener<Events[K]>): void {
    this.listeners.get(name)?.delete(fn as Listener<never>);
  }

  /** Whether anyone listens to `name` (to skip building an event nobody reads). */
  protected has<K extends keyof Events>(name: K): boolean {
    const set = this.listeners.get(name);
    return set !== undefined && set.size > 0;
  }

  protected emit<K extends keyof Events>(name: K, value: Events[K]): void {
    const set = this.listeners.get(name);
    if (!set) return;
    for (const fn of set) {
      try {
        (fn as Listener<Events[K]>)(value);
      } catch (err) {
        report(err);
      }
    }
  }
}
