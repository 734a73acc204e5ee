/* bench/http_ceiling/tls_openssl.c — an OpenSSL server context from PEM files, OpenSSL's defaults otherwise. */
#include "tls_openssl.h"

#include <stdio.h>
#include <stdlib.h>

#include <openssl/err.h>

/* A TLS server context serving the certificate (chain) and key; exits when they cannot be loaded. */
SSL_CTX *
tls_context(const char *cert, const char *key)
{
	SSL_CTX    *context = SSL_CTX_new(TLS_server_method());

	if (context == NULL || SSL_CTX_use_certificate_chain_file(context, cert) != 1 ||
		SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) != 1)
	{
		ERR_print_errors_fp(stderr);
		exit(1);
	}
	return context;
}
