// A document store that reports each collection method called through it: how the runner counts
// a batch's writes (round trips to a remote read-model store), and how tests count reads and
// writes. Calls a collection makes on itself are not seen.
import type { DocumentStore } from '../ports/documentStore.ts'

/** `store`, calling `count(collection, method)` before each collection method called through it. */
export function countingCalls(store: DocumentStore, count: (collection: string, method: string) => void): DocumentStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      // Writes inside a batch go through the batch's store: count those too.
      if (prop === 'writeBatch') return <R>(fn: (batch: DocumentStore) => Promise<R>) => target.writeBatch((batch) => fn(countingCalls(batch, count)))
      if (prop !== 'collection') return Reflect.get(target, prop, receiver)
      return (name: string) =>
        new Proxy(target.collection(name), {
          get(c, method, r) {
            const value = Reflect.get(c, method, r)
            if (typeof value !== 'function') return value
            return (...args: unknown[]) => (count(name, String(method)), value.apply(c, args))
          },
        })
    },
  })
}
