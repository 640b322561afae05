import { S3Backend, type S3Options } from "../../services/storage/s3-backend.js";
import { backendConformance } from "./backend-conformance.js";
import { type S3Server, startS3Server } from "./s3-server.js";

let server: S3Server | undefined;

function options(s3: S3Server): S3Options {
  return {
    bucket: s3.bucket,
    region: "us-east-1",
    endpoint: s3.endpoint,
    forcePathStyle: true,
    keyPrefix: "brain/",
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    timeoutMs: 5000,
  };
}

backendConformance(
  "s3 (s3rver)",
  async () => {
    server = await startS3Server();
    const s3 = server;
    let backend = await S3Backend.open(options(s3));
    return {
      backend,
      reopen: async () => {
        await backend.close();
        backend = await S3Backend.open(options(s3));
        return backend;
      },
      cleanup: async () => {
        await backend.close();
        await s3.stop();
      },
    };
  },
  { listsFoldersFirst: true, breaksOnRangesOfEmptyObjects: true },
);
