// The share page's script (a file: the CSP allows no inline script). Times come in the server's
// zone, as ISO 8601; this shows each in the viewer's own zone and names it. Without it, the
// server's times stay, with their offset.
(function () {
  "use strict";
  var zone;
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
  if (!zone) return;
  var format = new Intl.DateTimeFormat("en-CA", {
    timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "short",
  });
  function local(date) {
    var p = {};
    format.formatToParts(date).forEach(function (part) { p[part.type] = part.value; });
    return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second +
      " " + (p.timeZoneName || "");
  }
  function apply() {
    document.querySelectorAll("time[data-local]").forEach(function (el) {
      var date = new Date(el.getAttribute("datetime"));
      if (!isNaN(date.getTime())) el.textContent = local(date).trim();
    });
    document.querySelectorAll("[data-zone]").forEach(function (el) {
      el.textContent = zone + " (your browser)";
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", apply);
  else apply();
})();
