// The one script of the apps: drag a deal card onto a pipeline stage to move it. The drop submits the card's
// own "move" form (the same POST as choosing the stage and pressing Move), so the server decides as always.
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
      form.submit();
    });
  });
});
