// A Durable Object's SQLite (`ctx.storage.sql`) in the shape of the D1 calls services/cortex/search-index.ts
// makes (prepare, bind, all, first, run, batch), so the cortex's ranking SQL runs unchanged inside
// each shard. A batch is one synchronous transaction, atomic as D1's is.

type Value = string | number | null | ArrayBuffer;

class SqlStatement {
  constructor(
    private readonly storage: DurableObjectStorage,
    readonly query: string,
    private readonly params: readonly Value[] = [],
  ) {}

  bind(...params: unknown[]): SqlStatement {
    // D1 binds undefined as NULL; SqlStorage refuses it.
    return new SqlStatement(
      this.storage,
      this.query,
      params.map((p) => (p === undefined ? null : (p as Value))),
    );
  }

  runSync(): { results: Record<string, SqlStorageValue>[]; changes: number } {
    const cursor = this.storage.sql.exec(this.query, ...this.params);
    const results = cursor.toArray();
    return { results, changes: cursor.rowsWritten };
  }

  async all<T>(): Promise<{ results: T[]; success: true; meta: { changes: number } }> {
    const { results, changes } = this.runSync();
    return { results: results as T[], success: true, meta: { changes } };
  }

  async first<T>(column?: string): Promise<T | null> {
    const row = this.runSync().results[0];
    if (!row) return null;
    return (column ? row[column] : row) as T;
  }

  async run(): Promise<{ results: []; success: true; meta: { changes: number } }> {
    return { results: [], success: true, meta: { changes: this.runSync().changes } };
  }
}

/** The D1 face of a shard's storage; only what the cortex functions call is there. */
export function d1OverDurableSql(storage: DurableObjectStorage): D1Database {
  const db = {
    prepare: (query: string) => new SqlStatement(storage, query),
    batch: async (statements: SqlStatement[]) =>
      storage.transactionSync(() =>
        statements.map((s) => {
          const { results, changes } = s.runSync();
          return { results, success: true, meta: { changes } };
        }),
      ),
  };
  return db as unknown as D1Database;
}
