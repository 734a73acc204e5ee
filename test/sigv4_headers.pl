#!/usr/bin/perl
# Prints the X-Amz-Date and Authorization headers of a SigV4-signed DynamoDB
# request, as an AWS SDK computes them, for test/gateway.sh:
#   sigv4_headers.pl ACCESS_KEY_ID SECRET HOST TARGET BODY [CLOCK_OFFSET_SECONDS]
# SIGV4_SIGNED (default content-type;host;x-amz-date;x-amz-target) names the
# headers signed, to show what the gateway does with fewer.
use strict;
use warnings;
use Digest::SHA qw(sha256_hex hmac_sha256 hmac_sha256_hex);
use POSIX qw(strftime);

my ($key_id, $secret, $host, $target, $body, $offset) = @ARGV;
my $amz_date = strftime('%Y%m%dT%H%M%SZ', gmtime(time + ($offset // 0)));
my $day = substr($amz_date, 0, 8);
my $scope = "$day/us-east-1/dynamodb/aws4_request";
my %headers = ('content-type' => 'application/x-amz-json-1.0', 'host' => $host,
               'x-amz-date' => $amz_date, 'x-amz-target' => $target);
my $signed = $ENV{SIGV4_SIGNED} // 'content-type;host;x-amz-date;x-amz-target';
my $canonical = "POST\n/\n\n" . join('', map { "$_:" . ($headers{$_} // "") . "\n" } split(/;/, $signed))
    . "\n$signed\n" . sha256_hex($body);
my $to_sign = "AWS4-HMAC-SHA256\n$amz_date\n$scope\n" . sha256_hex($canonical);
my $key = hmac_sha256($day, "AWS4$secret");
$key = hmac_sha256($_, $key) for ('us-east-1', 'dynamodb', 'aws4_request');
print "X-Amz-Date: $amz_date\n";
print "Authorization: AWS4-HMAC-SHA256 Credential=$key_id/$scope, SignedHeaders=$signed, Signature="
    . hmac_sha256_hex($to_sign, $key) . "\n";
