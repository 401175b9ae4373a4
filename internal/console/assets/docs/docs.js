// Renders /api/v1/openapi.json with the vendored Swagger UI. "Try it out"
// is off: the reference reads, the console and the clients act.
window.SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#reference",
  deepLinking: true,
  displayOperationId: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  supportedSubmitMethods: [],
  validatorUrl: null,
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
