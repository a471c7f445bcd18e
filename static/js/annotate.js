// The item page: reading checks, failures, timer, idle-aware active time, heartbeat and autosave.
// The server enforces every rule; this script only makes the page pleasant and keeps work safe.
(function () {
  "use strict";
  var form = document.getElementById("item-form");
  if (!form) return;
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  var beatEvery = +form.dataset.heartbeat * 1000;
  var idleLimit = +form.dataset.idle * 1000, nSteps = +form.dataset.nSteps;
  // The server's numbers: seconds spent (rounded down) and seconds left before submission opens
  // (annotation.rules.seconds_left: whole seconds rounded up, 0 only once it is open).
  var startedAt = Date.now() - (+form.dataset.elapsed) * 1000;
  var opensAt = Date.now() + (+form.dataset.secondsLeft) * 1000;
  var submitBtn = $("#submit-btn"), dirtyEl = $("#dirty"), saveStatus = $("#save-status");
  var dirty = !dirtyEl.hidden, submitting = false;

  // --- changes and autosave (htmx posts the whole form to the draft URL) ---------------------
  function changed() {
    dirty = true;
    dirtyEl.hidden = false;
    if (window.htmx) window.htmx.trigger("#autosave", "autosave");
  }
  document.body.addEventListener("htmx:afterRequest", function (e) {
    if (e.detail.elt.id !== "autosave") return;
    if (!e.detail.successful) {
      saveStatus.textContent = "Offline — your changes will be saved when the connection is back";
      setTimeout(function () { window.htmx.trigger("#autosave", "autosave"); }, 5000);
    }
  });

  // --- reading: goal acknowledgement, every L2 step (and every L1 step when the study asks) -------------------------------------------
  function updateReading() {
    if (!$("#read-bar")) return;  // a form type without the step click-through
    var read = $$(".step-check:checked").length;
    var pct = nSteps ? Math.round(100 * read / nSteps) : 100;
    $("#read-bar").style.width = pct + "%";
    $("#read-count").innerHTML = "<strong>" + read + "/" + nSteps + "</strong> steps (" + pct + "%)";
    $$(".step-check").forEach(function (box) { box.closest(".step").classList.toggle("is-read", box.checked); });
  }

  // --- decision and failures -----------------------------------------------------------------
  var failures = $("#failures"), list = $("#failure-list");
  function renumber() {
    $$(".failure", list).forEach(function (fs, k) {
      $(".failure-n", fs).textContent = k + 1;
      $(".failure-remove", fs).setAttribute("aria-label", "Remove failure " + (k + 1));
    });
  }
  function addFailure(focus) {
    var next = 0;
    $$(".failure", list).forEach(function (fs) { next = Math.max(next, +fs.dataset.index + 1); });
    var html = $("#failure-template").innerHTML.replace(/__i__/g, next).replace(/__n__/g, next + 1);
    list.insertAdjacentHTML("beforeend", html);
    renumber();
    if (focus) list.lastElementChild.querySelector("textarea").focus();
  }
  function updateChoice() {
    var choice = $('input[name="choice"]:checked');
    var failing = choice && choice.value === "failure";
    if (failures) failures.hidden = !failing;
    $$(".choice").forEach(function (c) { c.classList.toggle("is-selected", c.querySelector("input").checked); });
    if (failing && list && !$(".failure", list)) addFailure(false);
  }
  if (list) $("#add-failure").addEventListener("click", function () { addFailure(true); changed(); });
  if (list) list.addEventListener("click", function (e) {
    var btn = e.target.closest(".failure-remove");
    if (!btn) return;
    btn.closest(".failure").remove();
    renumber();
    changed();
  });

  form.addEventListener("change", function (e) {
    if (e.target.classList.contains("step-check")) updateReading();
    if (e.target.name === "choice" || e.target.closest(".choice")) updateChoice();
    changed();
  });
  form.addEventListener("input", function (e) { if (e.target.tagName === "TEXTAREA") changed(); });

  // --- codebook dialog -----------------------------------------------------------------------
  var dialog = $("#codebook-dialog");
  $$("[data-open-codebook]").forEach(function (b) { b.addEventListener("click", function () {
    dialog.showModal();
    if (window.htmx) window.htmx.trigger("#codebook-body", "codebook-open");  // loaded once, on first open
  }); });
  $$("[data-close-codebook]").forEach(function (b) { b.addEventListener("click", function () { dialog.close(); }); });

  // --- timer: a display countdown from the server's seconds left, then time elapsed -------------
  function fmt(s) { s = Math.max(0, Math.floor(s)); return Math.floor(s / 60) + ":" + ("0" + (s % 60)).slice(-2); }
  function tick() {
    var now = Date.now(), elapsed = (now - startedAt) / 1000, left = (opensAt - now) / 1000;
    var open = left <= 0;  // shown rounded up, as the server rounds: never 0:00 while closed
    $("#timer-text").textContent = open ? "Time elapsed: " + fmt(elapsed) : fmt(Math.ceil(left)) + " until submission becomes open";
    submitBtn.disabled = !open;
    submitBtn.classList.toggle("is-waiting", !open);
  }

  // --- active time: visible tab and some input within the idle timeout -------------------------
  var lastInput = Date.now(), lastTick = Date.now(), pendingActive = 0;
  ["pointerdown", "pointermove", "keydown", "scroll", "wheel", "input", "focus"].forEach(function (ev) {
    window.addEventListener(ev, function () { lastInput = Date.now(); }, { passive: true, capture: true });
  });
  function accrue() {
    var now = Date.now();
    if (document.visibilityState === "visible" && now - lastInput < idleLimit) pendingActive += now - lastTick;
    lastTick = now;
  }
  function beat(useBeacon) {
    accrue();
    var data = new FormData();
    data.append("active_ms", String(pendingActive));
    data.append("csrfmiddlewaretoken", csrf);
    var sent = pendingActive;
    pendingActive = 0;
    if (useBeacon && navigator.sendBeacon) { navigator.sendBeacon(form.dataset.beatUrl, data); return; }
    fetch(form.dataset.beatUrl, { method: "POST", body: data, headers: { "X-CSRFToken": csrf }, credentials: "same-origin" })
      .catch(function () { pendingActive += sent; });  // offline: keep the time for the next beat
  }
  setInterval(function () { accrue(); tick(); }, 1000);
  setInterval(function () { beat(false); }, beatEvery);
  document.addEventListener("visibilitychange", function () { accrue(); if (document.visibilityState === "hidden") beat(true); });

  // --- submit ---------------------------------------------------------------------------------
  form.addEventListener("submit", function () {
    accrue();
    $("#active-ms").value = String(pendingActive);
    pendingActive = 0;
    submitting = true;
    submitBtn.disabled = true;
    submitBtn.textContent = "Submitting…";
  });
  window.addEventListener("beforeunload", function (e) {
    if (dirty && !submitting) { e.preventDefault(); e.returnValue = ""; }
  });

  // --- keyboard -------------------------------------------------------------------------------
  document.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      if (!submitBtn.disabled) form.requestSubmit(submitBtn);
      return;
    }
    var t = e.target.tagName;
    if (t === "TEXTAREA" || t === "INPUT" && e.target.type === "text" || e.altKey || e.ctrlKey || e.metaKey) return;
    var pick = { n: "none", f: "failure" }[e.key.toLowerCase()];
    if (!pick || (dialog && dialog.open)) return;
    var radio = $('input[name="choice"][value="' + pick + '"]');
    if (!radio) return;  // a form type without the failure choice
    radio.checked = true;
    radio.focus();
    radio.dispatchEvent(new Event("change", { bubbles: true }));
  });

  updateReading();
  updateChoice();
  tick();
  var errs = $("#submit-errors");
  if (errs) errs.scrollIntoView({ block: "center" });
})();
