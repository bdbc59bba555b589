import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.util.List;

/**
 * A MongoDB protocol stand-in for waitcmd's mongodb tests (no real MongoDB
 * server can be installed on the test machines): mongo-java-server with its
 * in-memory backend, reporting MongoDB 7.0.0 / wire version 21 so that the
 * current Node.js driver (7.x) talks to it. It has no authentication and no
 * replica set.
 *
 * Usage: java -cp 'lib/*:classes' MongoStandIn HOST PORT
 * Prints "listening on HOST:PORT" once it accepts connections; stops on SIGTERM.
 */
public final class MongoStandIn {
  private MongoStandIn() {}

  /** MongoDB 7.0.0, wire version 21. */
  static final MongoVersion MONGO_7_0 = new MongoVersion() {
    @Override
    public List<Integer> getVersionArray() {
      return List.of(7, 0, 0);
    }

    @Override
    public int getWireVersion() {
      return 21;
    }
  };

  public static void main(String[] args) throws Exception {
    String host = args.length > 0 ? args[0] : "127.0.0.1";
    int port = args.length > 1 ? Integer.parseInt(args[1]) : 27017;
    MongoServer server = new MongoServer(new MemoryBackend().version(MONGO_7_0));
    server.bind(host, port);
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
    System.out.println("listening on " + host + ":" + port);
    System.out.flush();
    Thread.currentThread().join();
  }
}
