/**
 * The part of `@aws-sdk/client-s3` the objstore kind calls: the client and
 * the four commands it sends. A dynamic `import()` of the package itself
 * keeps every command of S3; naming what is used lets the bundler leave the
 * rest out (docs/development.md, "The release bundle").
 *
 * @module
 */

export {
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from "@aws-sdk/client-s3";
