import Foundation
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

    /// TLS with the PEM files at `certificateChainPath` and `privateKeyPath`; throws
    /// ``LocalBackendError/invalidConfiguration(_:)`` naming a file that cannot be read.
    public init(certificateChainPath: String, privateKeyPath: String) throws {
        func read(_ path: String, _ what: String) throws -> String {
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw LocalBackendError.invalidConfiguration("tls: cannot read the \(what) at \(path)")
            }
        }
        self.init(
            certificateChainPEM: try read(certificateChainPath, "certificate chain"), privateKeyPEM: try read(privateKeyPath, "private key")
        )
    }

    /// NIOSSL's server configuration; throws ``LocalBackendError/invalidConfiguration(_:)`` for PEM text that does not
    /// hold a certificate or a key (the key itself never appears in the message).
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
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}
