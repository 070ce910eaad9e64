// Starts Swagger UI on the document this server serves. Kept out of index.html so the page's
// Content-Security-Policy can refuse inline scripts.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    docExpansion: "list",
    displayOperationId: true,
    displayRequestDuration: true,
    filter: true,
    persistAuthorization: false,
    // No call to the public validator service: the reference works with no network.
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
