import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate authority made for one test: its root signs server certificates for the names a test asks for, and
/// the client trusts it through ``trustRoots`` (never the system's roots, which it is not in). Nothing is written to
/// disk and nothing outlives the test; P-256 keys, valid from an hour ago.
public struct TestCertificateAuthority: Sendable {
    /// A server's certificate chain and key, as NIOSSL takes them and as PEM text.
    public struct ServerIdentity: Sendable {
        /// The server's certificate (the chain has no intermediates).
        public var chain: [NIOSSLCertificate]
        /// The certificate's private key.
        public var key: NIOSSLPrivateKey
        /// ``chain`` as PEM text.
        public var certificateChainPEM: String
        /// ``key`` as PEM text.
        public var privateKeyPEM: String
    }

    private let name: DistinguishedName
    private let key: Certificate.PrivateKey
    private let root: Certificate

    /// A new root named `commonName`.
    public init(commonName: String = "VortexRealtime test root") throws {
        name = try DistinguishedName { CommonName(commonName) }
        key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey,
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(24 * 3600),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                KeyUsage(keyCertSign: true)
            },
            issuerPrivateKey: key)
    }

    /// The roots a client configures to trust this authority (and nothing else).
    public var trustRoots: NIOSSLTrustRoots {
        get throws { .certificates([try Self.nioCertificate(root)]) }
    }

    /// A server certificate for `dnsNames` and the IPv4 addresses `ipAddresses` (four bytes each), signed by the root,
    /// valid until `notValidAfter`.
    public func issue(
        dnsNames: [String], ipAddresses: [[UInt8]] = [], notValidAfter: Date = Date().addingTimeInterval(24 * 3600)
    ) throws -> ServerIdentity {
        let serverKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let names = dnsNames.map(GeneralName.dnsName) + ipAddresses.map { GeneralName.ipAddress(ASN1OctetString(contentBytes: $0[...])) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: serverKey.publicKey,
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: notValidAfter,
            issuer: name, subject: try DistinguishedName { CommonName(dnsNames.first ?? "server") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                KeyUsage(digitalSignature: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: key)
        let pemKey = try serverKey.serializeAsPEM().pemString
        let pemCertificate = try certificate.serializeAsPEM().pemString
        return ServerIdentity(
            chain: [try NIOSSLCertificate(bytes: Array(pemCertificate.utf8), format: .pem)],
            key: try NIOSSLPrivateKey(bytes: Array(pemKey.utf8), format: .pem), certificateChainPEM: pemCertificate, privateKeyPEM: pemKey)
    }

    /// The server side's TLS configuration for `identity`.
    public static func serverConfiguration(_ identity: ServerIdentity) -> TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: identity.chain.map { .certificate($0) }, privateKey: .privateKey(identity.key))
    }

    private static func nioCertificate(_ certificate: Certificate) throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: Array(try certificate.serializeAsPEM().pemString.utf8), format: .pem)
    }
}
