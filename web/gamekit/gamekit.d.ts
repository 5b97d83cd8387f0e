// gamekit.d.ts: types of gamekit.js (@gamekit/client).

/** Names press() takes, mapped onto each genre's input record. */
export declare const BUTTONS: {
  left: number; up: number; right: number; down: number; undo: number;
  restart: number; pause: number; pick1: number; pick2: number; pick3: number;
};
export type Button = keyof typeof BUTTONS;

/** Every GK error code (src/sim/gk_err.h, via constants.js): its name
 * ("GK_EFULL"), gk_strerror's phrase and the sentence a page shows. */
export declare const ERRORS: Readonly<Record<string,
  { name: string; text: string; say: string }>>;
/** The sentence for a GK code; an unknown code is named with its number. */
export declare function errorSentence(code: number): string;
/** What a refused request or call rejects with: the code and its sentence. */
export interface GamekitError extends Error { code: number; sentence: string }
export declare function refusal(code: number, text: string): GamekitError;

export interface LoadOptions {
  /** The .wasm's bytes (default: dist/gamekit.wasm next to the loader). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** File name -> URL, for a page that serves the .wasm elsewhere. */
  locateFile?: (file: string, scriptDirectory: string) => string;
}

export interface ConnectOptions extends LoadOptions {
  /** A connect token (148 bytes), sent with every request of this client. */
  token?: Uint8Array;
  /** Play the genre's built-in bot instead of setInput/press. */
  bot?: boolean;
  /** The bot's seed (the engine mixes in the match seed and the slot). */
  seed?: number;
  /** Draw a predicted head (docs/PROTOCOL.md, "Prediction"): see
   * predictedState() and "rollback". */
  predict?: boolean;
  /** A WebSocket constructor (default: globalThis.WebSocket). */
  WebSocket?: typeof WebSocket;
  /** A monotonic clock in integer nanoseconds (default: nowNs). */
  now?: () => number;
}

/** A rollback of the predicted head: it was restored from the confirmed
 * run (`confirmed` steps) and re-simulated to `head` steps. */
export interface Rollback {
  head: number;
  confirmed: number;
  rollbacks: number;
}

/** A state or sample: the paths and values of `gk-replay dump --json`. */
export interface StateMap {
  /** Steps run (the state is after step `step - 1`). */
  step: number;
  /** The hash after the last step, 16 hex digits. */
  hash: string;
  /** Path -> value: numbers (decimal text beyond 2^53), booleans, hex;
   * with predictedState({ columns }), state[COLUMNS] holds those lists'
   * fields: list -> field key -> values by element. */
  state: Record<string, number | string | boolean> & {
    [COLUMNS]?: Record<string, Record<string, Float64Array>>;
  };
}

/** The symbol of a state's columns (Symbol.for("gamekit.columns")). */
export declare const COLUMNS: unique symbol;

export interface MatchInfo {
  slot: number; players: number; activeMask: number; firstStep: number;
  inputDelay: number; seed: string; genre: string;
}

export interface Desync { step: number; player: number; hostHash: string; peerHash: string; }
export interface Stall { step: number; awaited: number; waitedMs: number; }
export interface Ended { step: number; reason: number; }
export interface Snapshot { rc: number; kind: number; step: number; nextInput: number; error: string; }
export type Message =
  | { type: "room_created"; code: string; slot: number }
  | { type: "joined"; slot: number; players: number }
  | { type: "error"; code: number; text: string; sentence?: string }
  | { type: "secret"; slot: number; secret: Uint8Array }
  | { type: "shutdown"; graceMs: number }
  | { type: number; bytes: Uint8Array };

/** A fleet's REDIRECT (docs/PROTOCOL.md): the room's node. */
export interface Redirect { code: string; enet: string; wsUrl: string; }
export interface Stats {
  steps: number; samples: number; waits: number; packetsIn: number;
  packetsOut: number; dropped: number; stateRequests: number; snapshots: number;
}

export interface CreateRoomOptions {
  genre: string;
  maxPlayers?: number;
  /** 0: the server's choice. */
  inputDelay?: number;
  /** Genre options, as a JSON object (the server validates them). */
  options?: Record<string, unknown> | null;
  token?: Uint8Array;
}

export declare class Client {
  /** This peer's slot (-1 before one is known). */
  readonly slot: number;
  /** The room's code once created or joined. */
  readonly code: string | null;
  /** REDIRECTs this client followed. */
  readonly redirects: number;
  /** The reconnect secret (16 bytes) after MATCH_START, for rejoin(). */
  readonly secret: Uint8Array | null;
  readonly match: MatchInfo | null;
  readonly ended: Ended | null;

  on(name: "step", fn: (step: number, hash: string) => void): this;
  on(name: "started", fn: (m: MatchInfo) => void): this;
  on(name: "desync", fn: (d: Desync) => void): this;
  on(name: "stall", fn: (s: Stall) => void): this;
  on(name: "removed", fn: (r: { slot: number; step: number }) => void): this;
  on(name: "ended", fn: (e: Ended) => void): this;
  on(name: "snapshot", fn: (s: Snapshot) => void): this;
  on(name: "resumed" | "close", fn: () => void): this;
  on(name: "message", fn: (m: Message) => void): this;
  on(name: "secret", fn: (m: { slot: number; secret: Uint8Array }) => void): this;
  on(name: "rollback", fn: (r: Rollback) => void): this;
  /** A join, rejoin or spectate was sent on to the room's node (once per
   * request; a second REDIRECT, or one without a WebSocket URL, is an
   * "error" message and the call's refusal). */
  on(name: "redirect", fn: (r: Redirect) => void): this;
  /** The host of the room this client was in made its next room (Play
   * again): its code as on the wire and as people read it. */
  on(name: "next_room", fn: (r: { type: "next_room"; code: string; shown: string }) => void): this;
  /** With `predict`: the head was restored from the confirmed run. */
  onRollback(fn: (r: Rollback) => void): this;
  /** After every step this peer ran: its number and its 64-bit hash. */
  onStep(fn: (step: number, hash: string) => void): this;

  createRoom(o: CreateRoomOptions): Promise<{ type: "room_created"; code: string; slot: number }>;
  /** A room code as people see it (4 to 8 characters, or 16 of an older
   * server) from one as typed or as on the wire; null if it is no code. */
  shownCode(code: string): string | null;
  join(code: string, o?: { token?: Uint8Array }): Promise<{ type: "joined"; slot: number; players: number }>;
  /** This player's name in its room (1..24 bytes of UTF-8); the room's
   * names come back as "roster" events ({ names }: by slot). */
  setName(name: string): void;
  /** The room's names by slot ("" for none), from the last ROSTER. */
  names?: string[];
  /** Play again, from the host of a room whose match ended, on that
   * room's connection: `code`, the room it made next; the room's other
   * players and spectators get a "next_room" event. */
  nextRoom(code: string): void;
  /** Quick play: the fullest open room of this kind, or a new one; it
   * starts once full. Follows one REDIRECT. */
  quickPlay(o: { genre: string; maxPlayers?: number; inputDelay?: number; options?: object | null }): Promise<{ type: "quick_joined"; code: string; slot: number; players: number }>;
  spectate(code: string, o?: { token?: Uint8Array }): void;
  rejoin(code: string, slot: number, secret: Uint8Array, o?: { token?: Uint8Array }): void;
  start(): void;
  endMatch(reason?: number): void;
  removePlayer(slot: number): void;

  /** Axes held now, -127..127. */
  setInput(axes: { x?: number; y?: number }): void;
  /** Presses that reach exactly the next sampled step. */
  press(...buttons: Button[]): void;

  state(o?: { columns?: string[] }): StateMap | null;
  sample(): StateMap | null;
  /** With `predict`: the predicted head's state (hash "0": never hashed);
   * else the same as state(). */
  predictedState(o?: { columns?: string[] }): StateMap | null;
  /** Runs now the samples and steps whose time came, instead of at the
   * timer (late on a busy thread): call it before drawing a frame. */
  service(): void;
  stats(): Stats;
  /** Tests: change this peer's own state after `step` (a desync). */
  perturb(step: number, path: string, delta?: number): void;
  close(): void;
}

export declare function load(opts?: LoadOptions): Promise<unknown>;
/** The WebSocket URL of `path` (default "play") beside the page at `href`
 * (default location.href): https -> wss, http -> ws. */
export declare function socketUrl(path?: string, href?: string): string;
/** Client.shownCode without a client: loads gamekit.wasm once. */
export declare function shownCode(code: string, opts?: LoadOptions): Promise<string | null>;
export declare function connect(url: string, opts?: ConnectOptions): Promise<Client>;
export declare function decodeMap(bytes: Uint8Array): StateMap;
export declare function nowNs(): number;
