// A webhook receiver that verifies every delivery with the official Standard Webhooks library
// (the npm package standardwebhooks), as a consumer of the Provider Core API would.
//
// It listens on a loopback port and prints one JSON line per event to stdout: first
// {"listening": "<base URL>"}, then for each delivery {"webhook_id", "signature", "verified_with"},
// the labels of the secrets that verify it. It answers 204 when at least one secret verifies
// the delivery and 400 otherwise, so the service records an unverifiable delivery as failed.
// POST /secrets with {"<label>": "whsec_…", …} adds secrets to verify with (a receiver in the
// middle of a secret rotation holds the old one and the new one).
//
//   node receiver.mjs
import http from "node:http";
import { Webhook } from "standardwebhooks";

const secrets = new Map(); // label -> Webhook

function verifiedWith(body, headers) {
  const labels = [];
  for (const [label, webhook] of secrets) {
    try {
      webhook.verify(body, headers); // the raw body, before parsing; throws when it does not verify
      labels.push(label);
    } catch {
      // not this secret
    }
  }
  return labels;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    if (req.url === "/secrets") {
      for (const [label, secret] of Object.entries(JSON.parse(body.toString("utf8")))) {
        secrets.set(label, new Webhook(secret));
      }
      res.writeHead(204).end();
      return;
    }
    const labels = verifiedWith(body, req.headers);
    console.log(JSON.stringify({
      webhook_id: req.headers["webhook-id"],
      signature: req.headers["webhook-signature"],
      verified_with: labels,
    }));
    res.writeHead(labels.length > 0 ? 204 : 400).end();
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ listening: `http://127.0.0.1:${server.address().port}` }));
});
