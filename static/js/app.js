// Small progressive enhancements; every page works without this file.
(function () {
  "use strict";

  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  // Keyboard: "/" focuses the page's search box; "n" / "p" follow rel=next / rel=prev links
  // (procedure pages, table pages).
  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) {
      return;
    }
    if (event.key === "/") {
      var search = document.querySelector("input[type=search]");
      if (search) {
        event.preventDefault();
        search.focus();
        search.select();
      }
    } else if (event.key === "n" || event.key === "p") {
      var link = document.querySelector(event.key === "n" ? "a[rel=next]" : "a[rel=prev]");
      if (link) {
        event.preventDefault();
        link.click();
      }
    }
  });

  // "Copy" buttons: data-copy="#id" copies that element's text to the clipboard.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.setAttribute("data-copied", "1");
      button.lastChild.textContent = " Copied";
    });
  });
})();
