// s3rver ships no types; the tests use only its constructor, run and close.
declare module "s3rver";
