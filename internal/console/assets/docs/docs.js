// Renders /api/v1/openapi.json with the vendored Swagger UI. "Try it out"
// is off (the reference reads; the console and the clients act), so the
// servers and authorization controls are hidden by docs.css. The filter
// box finds a tag by name.
window.SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#reference",
  deepLinking: false,
  displayOperationId: true,
  docExpansion: "list",
  defaultModelsExpandDepth: -1,
  filter: true,
  supportedSubmitMethods: [],
  validatorUrl: null,
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});

// Swagger UI's filter box has no label; give it one as it appears.
new MutationObserver(() => {
  for (const input of document.querySelectorAll("#reference input:not([aria-label])")) {
    input.setAttribute("aria-label", input.classList.contains("operation-filter-input") ? "Filter by tag" : "Value");
  }
}).observe(document.getElementById("reference"), { childList: true, subtree: true });
