import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A key and a self-signed certificate for 127.0.0.1, made by openssl for this run; `certPath` is
 * the certificate's file, for NODE_EXTRA_CA_CERTS where a test's Brain must trust it.
 */
export function selfSignedCertificate(): { key: Buffer; cert: Buffer; certPath: string } {
  const dir = mkdtempSync(join(tmpdir(), "brain-tls-"));
  const keyPath = join(dir, "key.pem");
  const certPath = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ]),
    { stdio: "ignore" },
  );
  return { key: readFileSync(keyPath), cert: readFileSync(certPath), certPath };
}
