// The fetch that wraps the caller's: every request passes through untouched, and the response
// body of each provider call made inside withConversation() is teed into a Capture chunk by
// chunk, as the caller reads it: no read-ahead, no buffering, no added wait (a chunk is
// appended to a list and handed on; the list holds the chunks themselves, not copies).
//
// Nothing here may throw into the chat path. Every step of ours is guarded; the inner fetch's
// own errors (the provider unreachable, an aborted call) pass through unchanged, as without us.

import { Capture, formatFor, UI_FORMAT } from "./capture.js";
import { current } from "./context.js";

/** A fetch for `target` (a Console), calling `inner` (default: the global fetch at call time). */
export function captureFetch(target, inner) {
  return async function consoleFetch(input, init) {
    let capture = null;
    try {
      capture = await plan(target, input, init);
    } catch (error) {
      target.log.error("console-client: could not capture a request; passing it on", error);
    }
    const response = await (inner ?? globalThis.fetch)(input, init);
    if (capture === null) return response;
    return wrap(target, capture, response);
  };
}

async function plan(target, input, init) {
  const isRequest = typeof Request !== "undefined" && input instanceof Request;
  const method = init?.method ?? (isRequest ? input.method : "GET");
  const href = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const url = new URL(href);
  const format = formatFor(method, url.pathname);
  if (format === null) return null;
  const conversation = current();
  if (conversation === undefined) {
    target.uncaptured();
    return null;
  }
  if (conversation.capture !== "provider") return null; // the UI stream is the record
  let request;
  if (init !== undefined && "body" in init && init.body != null) {
    request = requestBytes(init.body);
  } else if (isRequest && input.body !== null) {
    request = new Uint8Array(await input.clone().arrayBuffer());
  }
  if (request === undefined) {
    target.skipped("the request has no body fetch can show us (a stream, a form)");
    return null;
  }
  return new Capture({ format, conversation, request, endpoint: url.pathname + url.search });
}

// The bytes fetch will send for `body`: a string goes out as UTF-8 (a lone surrogate as U+FFFD,
// which toWellFormed makes explicit), bytes as they are (copied: the caller may reuse them).
function requestBytes(body) {
  if (typeof body === "string") return body.toWellFormed();
  if (body instanceof ArrayBuffer) return new Uint8Array(body.slice(0));
  if (ArrayBuffer.isView(body)) {
    return new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  }
  return undefined; // a ReadableStream, FormData, URLSearchParams, Blob: not a JSON provider call
}

/** The response with its body teed into `capture` (2xx with a body only); never throws. */
export function wrap(target, capture, response, { liveAllowed = true } = {}) {
  try {
    capture.arrived(response);
    if (capture.status < 200 || capture.status >= 300) {
      // A provider error is the SDK's to raise; the console takes only exchanges.
      target.skipped(`the provider answered ${capture.status}`);
      return response;
    }
    if (response.body === null) {
      target.skipped("the response has no body");
      return response;
    }
    // The live API carries text chunks: a binary stream is posted whole, not forwarded.
    capture.live = liveAllowed && target.options.live && capture.streamed && !capture.binary;
    const teed = new Response(tee(target, capture, response.body), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // What a Response built from parts cannot take: where the answer came from.
    Object.defineProperties(teed, {
      url: { value: response.url },
      redirected: { value: response.redirected },
      type: { value: response.type },
    });
    return teed;
  } catch (error) {
    target.log.error("console-client: could not capture a response; passing it on", error);
    return response;
  }
}

function tee(target, capture, body) {
  const reader = body.getReader();
  const done = () => {
    try {
      if (capture.finish()) target.submit(capture);
    } catch (error) {
      target.log.error("console-client: could not queue an exchange", error);
    }
  };
  return new ReadableStream(
    {
      async pull(controller) {
        let step;
        try {
          step = await reader.read();
        } catch (error) {
          done(); // broken mid-way: what arrived is posted
          throw error;
        }
        if (step.done) {
          capture.ended = true;
          done();
          controller.close();
          return;
        }
        const chunk = step.value;
        try {
          capture.chunks.push(chunk);
          if (capture.live) target.liveChunk(capture, chunk);
        } catch (error) {
          target.log.error("console-client: could not keep a chunk", error);
        }
        controller.enqueue(chunk);
      },
      cancel(reason) {
        done(); // abandoned mid-way (the customer's stop button): what arrived is posted
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 }, // pull only when the caller reads: its pace, not ours
  );
}

/** The AI SDK UI message stream of `response` (toUIMessageStreamResponse) teed as an `ai-sdk.ui`
 * exchange whose request is `request`, the chat request body as the browser sent it. */
export function captureUI(target, request, response) {
  try {
    const conversation = current();
    if (conversation === undefined) {
      target.uncaptured();
      return response;
    }
    if (conversation.capture !== "ui") {
      target.skipped(
        'captureUIMessageStream outside withConversation({ capture: "ui" }): the provider ' +
          "calls are this conversation's record",
      );
      return response;
    }
    const bytes = requestBytes(request);
    if (bytes === undefined) {
      target.skipped("captureUIMessageStream: the request must be the body's text or bytes");
      return response;
    }
    if (!(response instanceof Response)) {
      target.skipped("captureUIMessageStream: not a Response");
      return response;
    }
    const capture = new Capture({ format: UI_FORMAT, conversation, request: bytes });
    return wrap(target, capture, response);
  } catch (error) {
    target.log.error("console-client: could not capture a UI message stream", error);
    return response;
  }
}
