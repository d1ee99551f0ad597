//! The TCP stream a connection reads and writes. On tokio it is tokio's:
//! its readiness comes from the runtime's own driver, which the task that
//! serves the session polls. async-net's would come from async-io's reactor
//! thread, which wakes the task across threads on every read (zoolock:
//! ZOOLOCK.md). With another runtime's feature on as well (features add up
//! across a build), the tasks may run where tokio's socket cannot: async-net's.

#[cfg(not(all(feature = "tokio", not(feature = "smol"), not(feature = "async-global-executor"))))]
pub use async_net::TcpStream;
#[cfg(all(feature = "tokio", not(feature = "smol"), not(feature = "async-global-executor")))]
pub use tokio_stream::TcpStream;

#[cfg(all(feature = "tokio", not(feature = "smol"), not(feature = "async-global-executor")))]
mod tokio_stream {
    use std::io::{IoSlice, Result};
    use std::net::SocketAddr;
    use std::pin::Pin;
    use std::task::{ready, Context, Poll};

    use tokio::io::{AsyncRead as _, AsyncWrite as _, ReadBuf};

    /// tokio's stream, read and written through `futures`' traits.
    #[derive(Debug)]
    pub struct TcpStream(tokio::net::TcpStream);

    impl TcpStream {
        /// Connects to `host:port` (resolved as tokio resolves it). Needs a
        /// tokio runtime, as every task of the client does with this feature.
        pub async fn connect(address: (&str, u16)) -> Result<TcpStream> {
            tokio::net::TcpStream::connect(address).await.map(TcpStream)
        }

        pub fn local_addr(&self) -> Result<SocketAddr> {
            self.0.local_addr()
        }
    }

    impl futures::AsyncRead for TcpStream {
        fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<Result<usize>> {
            let mut read = ReadBuf::new(buf);
            ready!(Pin::new(&mut self.get_mut().0).poll_read(cx, &mut read))?;
            Poll::Ready(Ok(read.filled().len()))
        }
    }

    impl futures::AsyncWrite for TcpStream {
        fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<Result<usize>> {
            Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
        }

        fn poll_write_vectored(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            bufs: &[IoSlice<'_>],
        ) -> Poll<Result<usize>> {
            Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
            Pin::new(&mut self.get_mut().0).poll_flush(cx)
        }

        fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
            Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
        }
    }
}
