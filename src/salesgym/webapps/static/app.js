// The one script of the apps: drag a deal card onto a pipeline stage to move it. The drop submits the card's
// own "move" form (the same POST as choosing the stage and pressing Move), so the server decides as always.
// It also says when the page is about to be replaced (a form sent, a link followed), so a harness that looks at
// the page after an action waits for the next one instead of reading this one (window.sgLeaving).
const leaving = () => { window.sgLeaving = true; };
addEventListener("submit", leaving, true);
addEventListener("beforeunload", leaving);
addEventListener("click", (e) => {
  const a = e.target instanceof Element ? e.target.closest("a[href]") : null;
  if (a && a.href.split("#")[0] !== location.href.split("#")[0] && !e.defaultPrevented) leaving();
}, true);
document.addEventListener("DOMContentLoaded", () => {
  let dragged = null;
  document.querySelectorAll(".dealcard[draggable]").forEach((card) => {
    card.addEventListener("dragstart", () => { dragged = card; });
  });
  document.querySelectorAll(".board .column").forEach((column) => {
    column.addEventListener("dragover", (e) => { e.preventDefault(); column.classList.add("over"); });
    column.addEventListener("dragleave", () => column.classList.remove("over"));
    column.addEventListener("drop", (e) => {
      e.preventDefault();
      column.classList.remove("over");
      const form = dragged && dragged.querySelector("form");
      if (!form) return;
      form.querySelector("select[name=dealstage]").value = column.dataset.stage;
      leaving();
      form.submit();
    });
  });
});
