export function prng(seed: number): () => number;
export function tenantSizes(tenants: number, total: number, min?: number): number[];
export function vocabulary(size?: number): string[];
export function zipfSampler(size: number, random: () => number, s?: number): () => number;
export function tenantText(seed: number): { message(): string; query(): string };
