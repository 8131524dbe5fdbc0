// Common Italian names and business vocabulary for synthetic companies and people. Names are
// frequent ones (ISTAT top lists) so that no generated person stands out as a real individual.

export const maleNames = [
  'Alessandro', 'Andrea', 'Antonio', 'Claudio', 'Daniele', 'Davide', 'Emanuele', 'Enrico', 'Fabio', 'Federico',
  'Francesco', 'Gabriele', 'Giacomo', 'Gianluca', 'Giorgio', 'Giovanni', 'Giuseppe', 'Lorenzo', 'Luca', 'Luigi',
  'Marco', 'Mario', 'Massimo', 'Matteo', 'Mattia', 'Maurizio', 'Michele', 'Nicola', 'Paolo', 'Pietro',
  'Riccardo', 'Roberto', 'Salvatore', 'Simone', 'Stefano', 'Tommaso', 'Vincenzo', 'Angelo', 'Bruno', 'Carlo',
  'Cristian', 'Diego', 'Domenico', 'Edoardo', 'Filippo', 'Franco', 'Gianni', 'Leonardo', 'Marcello', 'Raffaele',
  'Renato', 'Sergio', 'Umberto', 'Valerio', 'Alberto', 'Emilio', 'Ettore', 'Fabrizio', 'Ivan', 'Piero',
] as const;

export const femaleNames = [
  'Alessandra', 'Alessia', 'Alice', 'Anna', 'Antonella', 'Barbara', 'Beatrice', 'Caterina', 'Chiara', 'Claudia',
  'Cristina', 'Daniela', 'Elena', 'Elisa', 'Emma', 'Federica', 'Francesca', 'Gaia', 'Giorgia', 'Giulia',
  'Ilaria', 'Laura', 'Lucia', 'Manuela', 'Maria', 'Marta', 'Martina', 'Monica', 'Paola', 'Patrizia',
  'Roberta', 'Rosa', 'Sara', 'Silvia', 'Simona', 'Sofia', 'Stefania', 'Teresa', 'Valentina', 'Valeria',
  'Angela', 'Arianna', 'Camilla', 'Carla', 'Eleonora', 'Erica', 'Gabriella', 'Giovanna', 'Irene', 'Lorena',
  'Marina', 'Michela', 'Nadia', 'Noemi', 'Rita', 'Serena', 'Tiziana', 'Veronica', 'Vittoria', 'Zoe',
] as const;

export const surnames = [
  'Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi', 'Romano', 'Colombo', 'Ricci', 'Marino', 'Greco',
  'Bruno', 'Gallo', 'Conti', 'De Luca', 'Mancini', 'Costa', 'Giordano', 'Rizzo', 'Lombardi', 'Moretti',
  'Barbieri', 'Fontana', 'Santoro', 'Mariani', 'Rinaldi', 'Caruso', 'Ferrara', 'Galli', 'Martini', 'Leone',
  'Longo', 'Gentile', 'Martinelli', 'Vitale', 'Lombardo', 'Serra', 'Coppola', 'De Santis', "D'Angelo", 'Marchetti',
  'Parisi', 'Villa', 'Conte', 'Ferraro', 'Ferri', 'Fabbri', 'Bianco', 'Marini', 'Grasso', 'Valentini',
  'Messina', 'Sala', 'De Angelis', 'Gatti', 'Pellegrini', 'Palumbo', 'Sanna', 'Farina', 'Rizzi', 'Monti',
  'Cattaneo', 'Morelli', 'Amato', 'Silvestri', 'Mazza', 'Testa', 'Grassi', 'Pellegrino', 'Carbone', 'Giuliani',
  'Benedetti', 'Barone', 'Rossetti', 'Caputo', 'Montanari', 'Guerra', 'Palmieri', 'Bernardi', 'Martino', 'Fiore',
  'De Rosa', 'Ferretti', 'Bellini', 'Basile', 'Riva', 'Donati', 'Piras', 'Vitali', 'Battaglia', 'Sartori',
  'Neri', 'Costantini', 'Milani', 'Pagano', 'Ruggiero', 'Sorrentino', "D'Amico", 'Orlando', 'Damico', 'Negri',
  'Bassi', 'Cirillo', 'Fumagalli', 'Brambilla', 'Pozzi', 'Zanetti', 'Bertolini', 'Mazzoni', 'Cocco', 'Lodi',
  'Toscano', 'Pace', 'Bonetti', 'Ferrante', 'Zanella', 'Baldini', 'Cavallo', 'Rota', 'Tosi', 'Agostini',
] as const;

export const streets = [
  'Via Roma', 'Via Giuseppe Garibaldi', 'Via Giuseppe Mazzini', 'Via Camillo Benso di Cavour', 'Via Dante Alighieri',
  'Via Guglielmo Marconi', 'Via Giuseppe Verdi', 'Corso Italia', 'Viale Europa', 'Piazza della Repubblica',
  'Via Vittorio Emanuele II', 'Corso Vittorio Emanuele', 'Via XX Settembre', 'Via IV Novembre', 'Via Aldo Moro',
  'Via Alessandro Manzoni', 'Via Umberto I', 'Via Nazionale', 'Via della Libertà', 'Via Cesare Battisti',
  'Via dell\'Industria', 'Via dell\'Artigianato', 'Via del Lavoro', 'Via Enrico Fermi', 'Via Leonardo da Vinci',
  'Via Antonio Gramsci', 'Via Giacomo Matteotti', 'Via San Francesco', 'Via Papa Giovanni XXIII', 'Viale della Stazione',
  'Via delle Industrie', 'Via Galileo Galilei', 'Via Alessandro Volta', 'Via Trieste', 'Via Milano',
] as const;

/** Words that make a company name sound like its trade, by NACE section. */
export const sectorWords: Record<string, readonly string[]> = {
  A: ['Agricola', 'Vini', 'Ortofrutta', 'Allevamenti', 'Cantine', 'Agrumi', 'Olearia', 'Sementi'],
  B: ['Cave', 'Inerti', 'Estrazioni', 'Marmi'],
  C: ['Meccanica', 'Metalli', 'Plast', 'Tessile', 'Arredamenti', 'Alimentare', 'Packaging', 'Componenti', 'Elettronica', 'Stampi', 'Carpenterie', 'Calzature', 'Dolciaria', 'Pastificio'],
  D: ['Energia', 'Power', 'Solare', 'Elettrica'],
  E: ['Ambiente', 'Ecologia', 'Recuperi', 'Servizi Idrici'],
  F: ['Costruzioni', 'Edilizia', 'Impianti', 'Restauri', 'Infrastrutture', 'Edil'],
  G: ['Commerciale', 'Distribuzione', 'Forniture', 'Ricambi', 'Import Export', 'Market', 'Ingrosso', 'Store'],
  H: ['Trasporti', 'Logistica', 'Autotrasporti', 'Spedizioni', 'Cargo'],
  I: ['Ristorazione', 'Hotel', 'Turismo', 'Hospitality', 'Catering', 'Trattoria'],
  J: ['Software', 'Informatica', 'Digital', 'Sistemi', 'Media', 'Data', 'Net', 'Telecomunicazioni'],
  K: ['Finanziaria', 'Partecipazioni', 'Investimenti', 'Capital'],
  L: ['Immobiliare', 'Gestioni Immobiliari', 'Real Estate', 'Patrimoniale'],
  M: ['Consulting', 'Engineering', 'Progettazioni', 'Studio Tecnico', 'Consulenze', 'Ricerca'],
  N: ['Servizi', 'Pulizie', 'Facility', 'Vigilanza', 'Noleggi', 'Selezione'],
  O: ['Servizi Pubblici'],
  P: ['Formazione', 'Scuola', 'Academy', 'Istituto'],
  Q: ['Medical', 'Salute', 'Assistenza', 'Poliambulatorio', 'Diagnostica'],
  R: ['Sport', 'Eventi', 'Spettacoli', 'Cultura'],
  S: ['Servizi alla Persona', 'Riparazioni', 'Estetica', 'Lavanderia'],
  T: ['Servizi Domestici'],
  U: ['Organizzazione Internazionale'],
};

export const namePrefixes = [
  'Nord', 'Sud', 'Euro', 'Italo', 'Tecno', 'Eco', 'Green', 'Alfa', 'Delta', 'Nuova', 'Centro', 'Adriatica',
  'Tirrenica', 'Padana', 'Alpina', 'Mediterranea', 'Iper', 'Omega', 'Sigma', 'Prima', 'Global', 'Italia',
] as const;

export const foreignParents = [
  'Müller Beteiligungs GmbH', 'Dupont Participations SAS', 'Van der Berg Holding B.V.', 'García Inversiones S.L.',
  'Nordic Industrial Holdings AB', 'Atlantic Capital Partners Ltd', 'Schneider Industrie AG', 'Lefèvre Groupe SA',
  'Hudson Ridge Holdings Inc.', 'Alpen Invest AG',
] as const;
