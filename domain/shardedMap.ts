// A persistent map for decider states that only grow (every charge id an account ever used):
// writing copies one of SHARDS small records and the shard list, not the whole map, so folding
// one more event costs about the same after ten charges as after a hundred thousand.

const SHARDS = 1024

export interface ShardedMap<V> {
  readonly shards: readonly (Readonly<Record<string, V>> | undefined)[]
  readonly size: number
}

export const emptyShardedMap = <V>(): ShardedMap<V> => ({ shards: [], size: 0 })

function shardOf(key: string): number {
  // FNV-1a: cheap and spreads UUIDs and other ids evenly.
  let h = 2166136261
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619)
  return (h >>> 0) % SHARDS
}

export function getIn<V>(m: ShardedMap<V>, key: string): V | undefined {
  const shard = m.shards[shardOf(key)]
  return shard && Object.hasOwn(shard, key) ? shard[key] : undefined
}

export const hasIn = <V>(m: ShardedMap<V>, key: string): boolean => getIn(m, key) !== undefined

export function setIn<V>(m: ShardedMap<V>, key: string, value: V): ShardedMap<V> {
  const i = shardOf(key)
  const shard = m.shards[i]
  const had = shard !== undefined && Object.hasOwn(shard, key)
  const shards = m.shards.slice()
  shards[i] = { ...shard, [key]: value }
  return { shards, size: m.size + (had ? 0 : 1) }
}

export function deleteIn<V>(m: ShardedMap<V>, key: string): ShardedMap<V> {
  const i = shardOf(key)
  const shard = m.shards[i]
  if (!shard || !Object.hasOwn(shard, key)) return m
  const { [key]: _, ...rest } = shard
  const shards = m.shards.slice()
  shards[i] = rest
  return { shards, size: m.size - 1 }
}
