// The console's own script. A file, never inline: the pages' CSP allows scripts from this
// origin only. Everything here is an extra: every page works without it.
(function () {
  "use strict";

  // The browser's time zone, for the pages of people who have not chosen one on their settings
  // page (console/preferences.py reads the cookie; an unknown zone is ignored there).
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && /^[A-Za-z0-9_+\-\/]{1,64}$/.test(zone) &&
        document.cookie.split("; ").indexOf("console_tz=" + zone) === -1) {
      document.cookie = "console_tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax";
    }
  } catch (e) { /* no Intl: the server's default zone is used, and named on every page */ }

  // Copy buttons (a share link's address): the button names the field it copies by id.
  document.addEventListener("click", function (ev) {
    var button = ev.target && ev.target.closest ? ev.target.closest("[data-copy]") : null;
    if (!button) return;
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    var done = function () {
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = "Copy"; }, 2000);
    };
    field.select();
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(field.value).then(done, function () {
        if (document.execCommand("copy")) done();
      });
    } else if (document.execCommand("copy")) {
      done();
    }
  });

  function typing(el) {
    if (!el || !el.tagName) return false;
    var tag = el.tagName.toUpperCase();
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  // Keyboard: "/" focuses the search box; "j" and "k" move through the list's rows (or a
  // conversation's turns); Enter opens the row's conversation (its link has the focus).
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (typing(ev.target)) {
      if (ev.key === "Escape") ev.target.blur();
      return;
    }
    if (ev.key === "/") {
      var search = document.getElementById("id_q");
      if (search) {
        ev.preventDefault();
        search.focus();
        search.select();
      }
      return;
    }
    if (ev.key !== "j" && ev.key !== "k") return;
    var items = Array.prototype.slice.call(document.querySelectorAll("[data-row], [data-turn]"));
    if (!items.length) return;
    ev.preventDefault();
    var current = document.querySelector(".is-current");
    var i = items.indexOf(current);
    if (ev.key === "j") i = Math.min(items.length - 1, i + 1);
    else i = i < 0 ? 0 : Math.max(0, i - 1);
    if (current) current.classList.remove("is-current");
    var next = items[i];
    next.classList.add("is-current");
    var link = next.querySelector(".row-link");
    (link || next).focus();
    next.scrollIntoView({ block: "nearest" });
  });
})();
