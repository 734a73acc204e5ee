/* bench/http_ceiling/tls_openssl.h — the OpenSSL server context of the h2o and evhttp servers. */
#ifndef HTTP_CEILING_TLS_OPENSSL_H
#define HTTP_CEILING_TLS_OPENSSL_H

#include <openssl/ssl.h>

extern SSL_CTX *tls_context(const char *cert, const char *key);

#endif
