// Types of @support-console/client. The guide: docs/client.md in the console's repository.

/** The fetch signature the AI SDK providers and the official SDKs accept. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Where the client logs (pino, winston and the global console fit). */
export interface Logger {
  error(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  info(...args: unknown[]): void;
  debug(...args: unknown[]): void;
}

export interface ConsoleOptions {
  /** The console's base URL, http(s)://host[:port][/prefix]. */
  url: string;
  /** A service token (manage.py create_service_token NAME). */
  token: string;
  /** Seconds per post to the console once connected (default 5). */
  timeout?: number;
  /** Seconds to connect (default 2). */
  connectTimeout?: number;
  /** Exchanges kept in memory at most (default 1000). */
  queueSize?: number;
  /** Default: ~/.cache/console-client-js/<hash of url> ($XDG_CACHE_HOME honoured). */
  spoolDir?: string | null;
  /** Default 10,000. */
  spoolMaxFiles?: number;
  /** Default 256 MiB. */
  spoolMaxBytes?: number;
  /** 5xx answers an exchange may get before the one behind it is tried (default 20). */
  maxAttempts?: number;
  /** Retries in memory before an exchange goes to the spool (default 2). */
  retriesBeforeSpool?: number;
  /** First backoff, seconds (default 0.25); doubled per failure, equal jitter. */
  backoff?: number;
  /** Longest backoff, seconds (default 30). */
  backoffMax?: number;
  /** Seconds the process spends delivering when its event loop runs dry (default 2). */
  exitTimeout?: number;
  /** Forward streamed calls chunk by chunk as they arrive (POST /api/v1/live/chunks). */
  live?: boolean;
  /** Live pieces waiting at most (default 10,000); past that one is dropped. */
  liveQueueSize?: number;
  /** Deliver from a worker thread of its own (default true); false: on the caller's event loop
   * (also where no worker can be started). */
  worker?: boolean;
  /** Default: errors and warnings to the global console, nothing else. */
  logger?: Logger | null;
}

/** What happened to the provider calls of a console since the process started. The Python
 * client's names, so the figures of both clients add up. */
export interface Counters {
  /** Calls queued for the console. */
  captured: number;
  /** Accepted by the console. */
  sent: number;
  /** Posts repeated after a failure. */
  retried: number;
  /** Exchanges written to the spool. */
  spooled: number;
  /** Exchanges lost: the spool full (oldest first), an exchange the console answers with a 5xx
   * while it takes others, the queue full with no spool. */
  dropped: number;
  /** Refused by the console with a 4xx; nothing stored. */
  rejected: number;
  /** Provider calls outside withConversation(). */
  uncaptured: number;
  /** Streams closed or broken before their end (posted with what arrived). */
  cancelled: number;
  /** Not posted: a provider error, a body that is not UTF-8. */
  skipped: number;
  /** Live chunks accepted by the console. */
  live_sent: number;
  /** Live chunks lost (best effort). */
  live_dropped: number;
}

export interface ConversationOptions {
  /** The chat backend's conversation id (1 to 200 characters). */
  id: string;
  /** The data subject's id in the chat backend (1 to 200 characters). */
  customer: string;
  /** Free labels (at most 4 KB of JSON); `queue` names the team queue. */
  labels?: { queue?: string; [name: string]: unknown };
  /** "provider" (default): the provider calls made inside are the record. "ui": the AI SDK UI
   * message stream given to captureUIMessageStream is, and provider calls pass untouched. */
  capture?: "provider" | "ui";
}

/** Runs `fn` with provider calls (or the UI stream) posted as exchanges of this conversation;
 * returns what `fn` returns. Throws TypeError/RangeError for ids or labels the console would
 * refuse: the one place the client throws. */
export function withConversation<T>(conversation: ConversationOptions, fn: () => T): T;

export interface HistoryOptions {
  /** Seconds (default 10). */
  timeout?: number;
  /** What the provider needs to continue (?for=continuation). */
  forContinuation?: boolean;
}

/** A conversation's replay. */
export class History {
  readonly conversation: string;
  /** The response body, byte for byte: {"messages":[...]} */
  readonly raw: Uint8Array;
  /** Each message object's exact bytes. */
  readonly rawMessages: Uint8Array[];
  /** The messages parsed, to continue the conversation. */
  readonly messages: any[];
  readonly leftOutElements: number;
  readonly leftOutBytes: number;
}

/** The console answered something other than the replay. */
export class ConsoleError extends Error {
  readonly status: number;
  readonly body: string;
  readonly error: string | null;
  readonly detail: string | null;
}

/** No such conversation in the console (nothing of it arrived yet, or it was deleted). */
export class ConversationNotFound extends ConsoleError {}

/** One console (URL and service token) and the delivery of its exchanges. */
export class Console {
  readonly url: string;
  readonly options: Readonly<Required<Omit<ConsoleOptions, "url" | "token">>>;
  /** A fetch calling `inner` (default: the global fetch) that captures provider calls. */
  fetch(inner?: Fetch): Fetch;
  /** `response` with its UI message stream teed as an `ai-sdk.ui` exchange. */
  captureUIMessageStream(request: string | Uint8Array, response: Response): Response;
  history(conversation: string, options?: HistoryOptions): Promise<History>;
  counters(): Counters;
  /** Exchanges not yet delivered: queued, being posted, or spooled. */
  pending(): number;
  /** Resolves true once everything queued or spooled is delivered, false after `timeout`
   * seconds (what is still in memory then goes to the spool). */
  flush(timeout?: number): Promise<boolean>;
  /** Flush, then stop; later exchanges are dropped (counted). */
  close(timeout?: number): Promise<boolean>;
}

/** The Console for `url` and `token`: made on first use, the same one afterwards. */
export function consoleFor(options: ConsoleOptions): Console;

/** A fetch to hand to an AI SDK provider (createAnthropic({ fetch }), createOpenAI({ fetch }))
 * or an official SDK client (new Anthropic({ fetch }), new OpenAI({ fetch })). It calls `fetch`
 * (default: the global fetch) and captures the provider calls made inside withConversation(). */
export function consoleFetch(options: ConsoleOptions & { fetch?: Fetch }): Fetch;

/** `response` (from toUIMessageStreamResponse) with its UI message stream teed, posted as an
 * `ai-sdk.ui` exchange of the conversation of withConversation({ capture: "ui" }) whose request
 * is `request`, the chat request body exactly as the browser sent it. Never throws. */
export function captureUIMessageStream(
  request: string | Uint8Array,
  response: Response,
  console?: { url: string; token: string },
): Response;

/** The replay of `conversation` (the console of consoleFetch when there is only one). */
export function history(
  conversation: string,
  options?: HistoryOptions & { url?: string; token?: string },
): Promise<History>;

/** Deliver what every console has queued or spooled within `timeout` seconds (default 10). */
export function flush(timeout?: number): Promise<boolean>;

/** The counters of every console of this process, added up. */
export function counters(): Counters;

/** Flush and stop every console (a SIGTERM handler, the end of a test). */
export function shutdown(timeout?: number): Promise<boolean>;

/** The console format of a provider call, or null (capture-table.json). */
export function formatFor(method: string, pathname: string): string | null;

export const version: string;
