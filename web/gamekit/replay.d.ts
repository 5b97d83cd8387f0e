// Types of replay.js: a .gkr replay opened, verified and seeked in the
// browser (the C reader and verdict of gk-replay, in gamekit.wasm).
import type { LoadOptions, StateMap } from "./gamekit.js";

/** Steps between kept snapshots (the seek cost is at most this many). */
export declare const SNAPSHOT_EVERY: number;

export interface ReplayDamage {
  /** The reader's GK_E* code and its name. */
  code: number; name: string;
  /** The file offset of the damaged block, and what is wrong there. */
  offset: number; what: string;
}

export interface ReplayInfo {
  headerOk: boolean; format: number; players: number; inputSize: number;
  genreVersion: number; stepSeconds: [number, number];
  lockstep: { inputDelay: number; lead: number } | null;
  complete: boolean; cutShort: boolean; steps: number;
  /** The run's seed, decimal (64 bits). */
  seed: string;
  /** The recorded final hash, 16 hex digits. */
  finalHash: string; size: number;
  genre: string | null; origin: string | null;
  /** The first damage, after whose steps the verdict is "invalid". */
  damage: ReplayDamage | null;
}

export interface ReplayVerdict {
  /** false until the last step ran (status "ok" meanwhile). */
  done: boolean;
  status: "ok" | "mismatch" | "invalid";
  stepsChecked: number; step: number;
  expected: string; actual: string; offset: number; code: number;
  /** The C verdict's message; text: what gk-replay verify prints after
   * "FILE: ". */
  message: string; text: string;
  /** verify() only. */
  steps?: number; seconds?: number; stepsPerSecond?: number;
}

export interface StateDiff {
  total: number; first_byte: number;
  fields: { path: string; a: number | string | boolean; b: number | string | boolean }[];
}

export declare class Replay {
  info: ReplayInfo;
  /** false when the file cannot be run at all; error says why. */
  playable: boolean;
  error: string | null;
  /** Steps run: the state shown is after this many steps. */
  readonly position: number;
  /** Runs on to position `until`, checking every hash. */
  run(until: number): ReplayVerdict;
  /** The scan loop n steps further (snapshots for seeks, hashes checked). */
  scan(n?: number): ReplayVerdict;
  step(n?: number): ReplayVerdict;
  /** To position `to` from the nearest kept snapshot. */
  seek(to: number): ReplayVerdict;
  /** The recorded hash after step `step` (0-based), or null. */
  recordedHash(step: number): string | null;
  verdict(): ReplayVerdict;
  verify(opts?: { chunk?: number;
    onProgress?: (done: number, total: number) => void;
    shouldStop?: () => boolean }): Promise<ReplayVerdict>;
  state(): StateMap | null;
  sample(): StateMap | null;
  /** A .state file's canonical bytes (a desync bundle's) as a map. */
  stateOf(bytes: Uint8Array): StateMap;
  /** The fields two canonical states disagree on, as gk-replay diff. */
  diff(a: Uint8Array, b: Uint8Array, max?: number): StateDiff;
  close(): void;
}

export interface OpenReplayOptions extends LoadOptions {
  /** Steps between kept snapshots (default SNAPSHOT_EVERY). */
  every?: number;
}

/** Opens a .gkr file's bytes; always resolves (see Replay.playable). */
export declare function openReplay(bytes: Uint8Array | ArrayBuffer,
  opts?: OpenReplayOptions): Promise<Replay>;
