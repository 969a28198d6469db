import NIOSSL

/// The certificate and key a ``LocalBackendServer`` serves `https://` and `wss://` with
/// (``LocalBackendConfiguration/tls``): so an app, or a test, reaches the local backend the way it reaches AWS, through
/// TLS, certificate verification included. Both are PEM text; the chain starts with the server's own certificate.
public struct LocalBackendTLS: Sendable, Equatable {
    /// The server's certificate, then any intermediates, PEM encoded.
    public var certificateChainPEM: String
    /// The certificate's private key, PEM encoded (unencrypted).
    public var privateKeyPEM: String

    /// TLS with `certificateChainPEM` and `privateKeyPEM`.
    public init(certificateChainPEM: String, privateKeyPEM: String) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// NIOSSL's server configuration; throws ``LocalBackendError/invalidConfiguration(_:)`` for PEM text that does not
    /// hold a certificate or a key, or a key that is not the certificate's (the key itself never appears in the message).
    func serverConfiguration() throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8))
        } catch {
            throw LocalBackendError.invalidConfiguration("tls: the certificate chain is not PEM certificates (\(error))")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        } catch {
            throw LocalBackendError.invalidConfiguration("tls: the private key is not a PEM private key")
        }
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        // Loaded once here: Hummingbird loads it only when it starts serving, where a key that does not belong to the
        // certificate would fail the server with NIOSSL's error instead of this one.
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw LocalBackendError.invalidConfiguration("tls: the certificate chain and private key cannot be used together (\(error))")
        }
        return configuration
    }
}
