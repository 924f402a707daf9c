// The console's only script, progressive: without it every time reads as
// UTC and every page still works. It shows times in the viewer's zone.
"use strict";
(function () {
  function local() {
    var zone = "";
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
    document.querySelectorAll("time[datetime]").forEach(function (el) {
      var at = new Date(el.getAttribute("datetime"));
      if (isNaN(at.getTime())) { return; }
      el.title = el.getAttribute("datetime");
      el.textContent = at.toLocaleString(undefined, {
        year: "numeric", month: "short", day: "numeric",
        hour: "2-digit", minute: "2-digit", second: "2-digit"
      });
    });
    document.querySelectorAll("[data-zone]").forEach(function (el) {
      if (zone) { el.textContent = zone; }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", local);
  } else {
    local();
  }
})();
