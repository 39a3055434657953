// "Live now" follows by itself: the console's stream (GET /live/stream) sends a `now` event
// whenever a conversation starts or stops streaming an answer; the list is then fetched again
// (GET /live/ as a fragment: the read service checks access and writes its audit row) and
// swapped in, and the menu's count follows. No page reload, no polling.
const section = document.getElementById("live-now");
if (section && window.EventSource) {
  let asked = 0;
  async function refresh() {
    const seq = ++asked;
    const response = await fetch(section.dataset.listUrl, {
      headers: { "HX-Request": "true" },
      credentials: "same-origin",
    });
    if (!response.ok || seq !== asked) return; // a newer refresh is under way
    section.innerHTML = await response.text();
    const list = document.getElementById("live-now-list");
    const n = list ? parseInt(list.dataset.count, 10) || 0 : 0;
    for (const badge of document.querySelectorAll("[data-live-count]")) {
      badge.textContent = String(n);
      badge.hidden = n === 0;
      badge.dataset.n = String(n);
    }
  }
  const stream = new EventSource(section.dataset.streamUrl);
  stream.addEventListener("now", () => refresh().catch(() => {}));
  // After a reconnect (not the first connection: the page is fresh), what changed meanwhile.
  let opened = 0;
  stream.addEventListener("open", () => {
    if (opened++) refresh().catch(() => {});
  });
}
