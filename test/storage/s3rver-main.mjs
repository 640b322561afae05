// A local S3-compatible server (s3rver) for the S3 backend's tests, as its own process. It needs
// node --openssl-legacy-provider: s3rver encrypts list continuation tokens with DES.
import S3rver from "s3rver";

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
const { port } = await server.run();
process.stdout.write(`s3rver listening on http://127.0.0.1:${port}\n`);
process.once("SIGTERM", () => server.close().then(() => process.exit(0)));
