// repolens search page: small conveniences only; the page works without them.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // "/" puts the cursor in the query box, as on most code search pages.
  const q = document.getElementById("q");
  document.addEventListener("keydown", (event) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
    if (event.key === "/" && q && !typing) {
      event.preventDefault();
      q.focus();
      q.select();
    }
  });
  // The question box takes a pasted log or traceback whole (its lines are part of the
  // question); Enter searches, Shift+Enter starts a new line, and the box grows with its lines.
  if (q && q.tagName === "TEXTAREA") {
    const fit = () => { q.rows = Math.min(12, Math.max(1, q.value.split("\n").length)); };
    q.addEventListener("input", fit);
    q.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        q.form.requestSubmit();
      }
    });
  }
  // Copy the reply exactly as an agent receives it.
  const copy = document.getElementById("copy");
  const text = document.getElementById("reply-text");
  if (copy && text) {
    copy.hidden = false;
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(text.value);
      } catch {
        text.hidden = false;
        text.select();
        document.execCommand("copy");
        text.hidden = true;
      }
      copy.textContent = "copied";
    });
  }
});
